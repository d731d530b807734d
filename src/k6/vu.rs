//! A k6 VU: its own JavaScript runtime and context (QuickJS through
//! `rquickjs`) running in a stackful coroutine on the worker thread that
//! runs the VU's iterations, and the loop by which that thread serves it.
//!
//! Why QuickJS: it builds from its C source with the machine's compiler
//! (`rquickjs-sys` through `cc`: about a minute of the two a clean build of
//! the new crates took here, on 2 shared cores), downloads nothing at build
//! time (V8 through `deno_core` fetches a prebuilt library), runs ES modules
//! with a loader we write, and a runtime plus context costs little memory.
//!
//! Why a coroutine per VU: a k6 script is synchronous (`http.post(...)`
//! returns the response; scripts do not `await`), so a VU waiting for its
//! response must be suspended in the middle of its JavaScript, with its
//! stack, while the other VUs go on. Each VU's JavaScript runs on a stack
//! of its own (`corosensei`: `VU_STACK`, a guard page below it, only the
//! pages touched cost memory) on the worker thread. `http.*` suspends the
//! coroutine, handing the request out to [`Vu::call`], which makes it with
//! dbload's own HTTP client (`driver::http::client`, timed as `dbload
//! http` times its requests) and resumes the coroutine with the answer;
//! `sleep()` suspends it the same way for a tokio timer that the run's stop
//! ends. A request crosses no thread: the first design (an OS thread per
//! VU, the request sent over a channel to the worker thread and the answer
//! back) paid a futex wake and a context switch each way.
//!
//! QuickJS's stack-overflow check compares the stack pointer with the top
//! it read when the runtime was made: the runtime is made inside the
//! coroutine, on the stack it always runs on, and allowed `JS_STACK` of
//! it, so a script that recurses without end gets a RangeError, not the
//! guard page. A coroutine must be resumed and dropped on the thread that
//! made it (its runtime is not thread-safe): [`Vu`] is `Send` only through
//! `SendWrapper`, which checks that at each use, and `run::k6` keeps each
//! VU in one task of one worker thread from its init code to its end.
//!
//! Measured by `bench/k6.sh` (November 2026, release build, nginx on
//! loopback, 30 VUs on one thread, 2 cores shared with other builds, load
//! average 5.5-7.0, 5 alternating rounds): a minimal `http.post` script
//! 23.3 us of client CPU per request against `dbload http`'s 4.3 us, 5.2x
//! (with a thread per VU: 68.0 us, 12.5x); issue 33 asks for 1.5x. On 28
//! November, with the release profile's LTO thin and 16 codegen units
//! (`CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16`),
//! load average 7.0-7.8, 5 rounds: 29.3 us against 4.9 us, 5.7x (IQR
//! 5.7-6.3), before the response became an instance of http.js's
//! `Response` made with its values in order, params were read in
//! JavaScript, and the HTTP metrics were added to by place (`perf`: 7.7 %
//! of the samples in QuickJS's atom lookups, `Object::set` and `get` by
//! name from Rust); after, load average 5.8-6.5: 28.3 us against 5.5 us,
//! 5.2x (IQR 5.1-5.3), the atom lookups down to 2.2 %. The rest is spread
//! over QuickJS's calls (6 %), its property sets and allocations, and the
//! kernel. On 28 November again (the same build profile, 3 rounds): 31.4 us
//! against 5.6 us, 4.96x (load average 5.8-8.0), before `res.headers`,
//! `res.timings` and `res.request` were made only when a script reads them
//! (12 % of the samples had gone to making the headers object) and an
//! iteration became one call of a compiled function (no lookups by name);
//! after, 23.4 us against 5.8 us, 3.94x (IQR 3.82-3.99, load average
//! 4.3-6.9; user time 24.8 to 16.1 us). That evening (same profile, 3
//! rounds, load average 7.4-10.0): 17.3 us against 4.3 us, 3.88x (IQR
//! 3.67-4.09), before the client kept the last request's parsed URL and
//! encoded head, a request's timeout became one sleep per client
//! (`driver::http::watchdog`) and the VU reused its request's buffers;
//! after, 13.5 us against 4.4 us, 2.96x (IQR 2.96-3.12; user 12.1 to
//! 8.8 us), and 2.4x and 3.3x in two later runs (load average 2.4-7.5).
//! The 1.5x is not met: what is left is QuickJS running the script's
//! calls (`JS_CallInternal` 7 % of the samples; rquickjs duplicates the
//! context for each value it hands over, 2 %), its allocations (7 %), and
//! the kernel: 27 % of the samples are the scheduler switching away on the
//! loopback send that wakes nginx. Memory:
//! 0.25 MiB per VU for the notify-shaped script (38.8 MiB of peak RSS at
//! 100 VUs, 507.5 at 2,000; a thread per VU: 0.28).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use rquickjs::function::{Func, Opt};
use rquickjs::{Context, Ctx, Exception, Function, IntoJs, Object, Persistent, Runtime, Value};
use send_wrapper::SendWrapper;
use tokio_util::sync::CancellationToken;

use super::http;
pub use super::native::{Call, Loaded, Outputs, TextSummary};
use super::native::{HttpMetrics, In, Out, State};
use super::script::{describe, Imports, Script};
use super::shared::{self, Opened, SharedArrays};
use crate::driver::http::client::{Answer, Client, Request};
use crate::stats::buffered::lock;
use crate::stats::k6::{Kind, Metrics};

/// The requests of an `http.batch` made at once, at most: k6's `batch`
/// option's default.
const BATCH: usize = 20;
/// A VU coroutine's stack: QuickJS may use up to [`JS_STACK`] of it, the
/// rest is for the Rust and C frames around it.
const VU_STACK: usize = 1 << 20;
const JS_STACK: usize = 768 << 10;

/// What a VU is started with.
#[derive(Clone)]
pub struct VuSpec {
    /// k6's `__VU`: 1-based; 0 for the VU that runs `setup()` and `teardown()`.
    pub id: u32,
    pub script: Script,
    /// `__ENV`: the process's environment, then `-e NAME=VALUE`.
    pub env: Vec<(String, String)>,
    /// The run's stop (Ctrl-C): a VU's JavaScript is interrupted, its sleep ended.
    pub stop: CancellationToken,
    pub metrics: Arc<Mutex<Metrics>>,
    /// `setup()`'s result as JSON, handed to `default(data)`.
    pub data: Option<String>,
    /// What the script's `textSummary(data, options)` renders with (the
    /// report's k6 summary): given to the VU that runs `handleSummary`.
    pub text_summary: Option<TextSummary>,
    /// The run's `SharedArray`s, one for all its VUs.
    pub shared: Arc<SharedArrays>,
}

/// A call that did not complete.
#[derive(Debug)]
pub enum CallError {
    /// The script threw: `file:line:col: Error: message`.
    Thrown(String),
    /// The VU is gone (its runtime failed, or it was stopped).
    Gone,
}

type Body = Coroutine<In, Out, (), DefaultStack>;

/// A VU: its coroutine, resumed on the thread that made it.
pub struct Vu {
    co: SendWrapper<Body>,
    /// The clients of a batch's requests after its first (made with the
    /// first batch that needs them, kept with their connections).
    batch_clients: Vec<Client>,
    /// The VU's own child of the run's stop: cancelled when the run stops
    /// or the VU is dropped.
    stop: CancellationToken,
}

impl Vu {
    /// Makes the VU's coroutine on this thread and runs the script's init
    /// code in it: the VU and what the init code left, or why it failed.
    pub async fn start(spec: VuSpec) -> Result<(Vu, Loaded)> {
        let stop = spec.stop.child_token();
        let stack = DefaultStack::new(VU_STACK).map_err(|e| anyhow::anyhow!("making a VU's stack: {e}"))?;
        let spec = VuSpec { stop: stop.clone(), ..spec };
        let co = Coroutine::with_stack(stack, move |yielder: &Yielder<In, Out>, _: In| body(yielder, &spec));
        let mut vu = Vu { co: SendWrapper::new(co), batch_clients: Vec::new(), stop };
        match vu.drive(In::Start, None, false).await {
            Some(Out::Loaded(loaded)) => Ok((vu, loaded?)),
            _ => Err(anyhow::anyhow!("a VU ended while loading its script")),
        }
    }

    /// Runs `call` on the VU, making its requests with `client`
    /// (`record`: into the run's figures) and sleeping its sleeps.
    pub async fn call(&mut self, call: Call, client: &mut Client, record: bool) -> Result<Option<String>, CallError> {
        match self.drive(In::Call(call), Some(client), record).await {
            Some(Out::Done(done)) => done.map_err(CallError::Thrown),
            _ => Err(CallError::Gone),
        }
    }

    /// Runs the script's `handleSummary` on `data` (k6's summary data, as
    /// JSON), its requests made with `client` (not recorded): its outputs.
    pub async fn summarize(&mut self, data: String, client: &mut Client) -> Result<Outputs, CallError> {
        match self.drive(In::Call(Call::Summary(data)), Some(client), false).await {
            Some(Out::Summarized(done)) => done.map_err(CallError::Thrown),
            _ => Err(CallError::Gone),
        }
    }

    /// Resumes the coroutine with `input`, then serves what it hands out
    /// until it ends a call or its init code (that end), or returns (none).
    async fn drive(&mut self, mut input: In, mut client: Option<&mut Client>, record: bool) -> Option<Out> {
        loop {
            if self.co.done() {
                return None;
            }
            let out = match self.co.resume(input) {
                CoroutineResult::Yield(out) => out,
                CoroutineResult::Return(()) => return None,
            };
            input = match out {
                Out::Request(r) => match client.as_deref_mut() {
                    Some(client) => In::Answer(Box::new(client.request(&r, record).await), r),
                    None => In::Stopped,
                },
                Out::Batch(rs) => match client.as_deref_mut() {
                    Some(client) => In::Answers(self.batch(client, &rs, record).await, rs),
                    None => In::Stopped,
                },
                Out::Sleep(d) => tokio::select! {
                    _ = tokio::time::sleep(d) => In::Woke,
                    _ = self.stop.cancelled() => In::Stopped,
                },
                end => return Some(end),
            };
        }
    }
}

impl Vu {
    /// A batch's requests at once, [`BATCH`] at a time, each on a client
    /// of its own (`client`, then the VU's batch clients): as k6 makes
    /// them, each on a connection of its own.
    async fn batch(&mut self, client: &mut Client, rs: &[Request], record: bool) -> Vec<Answer> {
        let mut answers = Vec::with_capacity(rs.len());
        for chunk in rs.chunks(BATCH) {
            while self.batch_clients.len() + 1 < chunk.len() {
                self.batch_clients.push(client.sibling());
            }
            let clients = std::iter::once(&mut *client).chain(self.batch_clients.iter_mut());
            let made = chunk.iter().zip(clients).map(|(r, c)| c.request(r, record));
            answers.extend(futures_util::future::join_all(made).await);
        }
        answers
    }
}

impl Drop for Vu {
    /// Ends the coroutine on its own stack (a request or sleep it waits
    /// for throws, its JavaScript is interrupted), so its runtime is freed
    /// there and nothing is unwound through QuickJS's C frames.
    fn drop(&mut self) {
        self.stop.cancel();
        while !self.co.done() {
            let _ = self.co.resume(In::Stopped);
        }
    }
}

/// The coroutine: the runtime made and the script loaded, then calls run
/// as they come until the VU is stopped.
fn body(yielder: &Yielder<In, Out>, spec: &VuSpec) {
    let (rt, ctx, imports) = match runtime(spec) {
        Ok(r) => r,
        Err(e) => {
            yielder.suspend(Out::Loaded(Err(e)));
            return;
        }
    };
    let state = Rc::new(State {
        id: spec.id,
        yielder,
        group: RefCell::default(),
        init: Cell::new(true),
        warm: Cell::new(false),
        discard: Cell::new(false),
        stop: spec.stop.clone(),
        metrics: spec.metrics.clone(),
        http: HttpMetrics::new(),
        dir: spec.script.dir.clone(),
        request: Cell::default(),
        text_summary: spec.text_summary,
        shared: spec.shared.clone(),
        opened: Opened::default(),
    });
    let loaded = ctx.with(|ctx| init(&ctx, &state, spec, &imports));
    state.init.set(false);
    let ok = loaded.is_ok();
    let mut input = yielder.suspend(Out::Loaded(loaded));
    // Compiled once: each iteration calls it, its global names resolved
    // when it was compiled, not looked up by name from Rust each time.
    let iterate = ctx.with(|ctx| ctx.eval::<Function, _>(ITERATE).map(|f| Persistent::save(&ctx, f)));
    let Ok(iterate) = iterate else { return };
    while let (true, In::Call(call)) = (ok, input) {
        let out = ctx.with(|ctx| run_call(&ctx, &state, call, &iterate));
        input = yielder.suspend(out);
    }
    // Its value is freed before the runtime that holds it.
    drop(iterate);
    drop(ctx);
    drop(rt);
}

/// An iteration: `__ITER` set, the default function called with setup's data.
const ITERATE: &str = "(function (iteration) { __ITER = iteration; return __k6_export_default(__k6_data); })";

/// The VU's QuickJS runtime and context, its imports resolved by `Imports`,
/// its JavaScript interrupted once the run stops.
fn runtime(spec: &VuSpec) -> Result<(Runtime, Context, Imports)> {
    let js = |e: rquickjs::Error| anyhow::anyhow!("starting the JavaScript runtime: {e}");
    let rt = Runtime::new().map_err(js)?;
    rt.set_max_stack_size(JS_STACK);
    let stop = spec.stop.clone();
    rt.set_interrupt_handler(Some(Box::new(move || stop.is_cancelled())));
    let imports = Imports::new(spec.script.clone());
    rt.set_loader(imports.clone(), imports.clone());
    let ctx = Context::full(&rt).map_err(js)?;
    Ok((rt, ctx, imports))
}

/// Installs k6's globals, then runs the script's init code.
fn init(ctx: &Ctx<'_>, state: &Rc<State>, spec: &VuSpec, imports: &Imports) -> Result<Loaded> {
    install(ctx, state, &spec.env).map_err(|e| anyhow::anyhow!("installing k6's functions: {}", describe(ctx, e)))?;
    let module = imports.declare(ctx)?;
    let (module, promise) = module.eval().map_err(|e| imports.error(ctx, e, "running the script's init code"))?;
    promise.finish::<()>().map_err(|e| imports.error(ctx, e, "running the script's init code"))?;
    let fail = |e| imports.error(ctx, e, "reading the script's exports");
    let ns = module.namespace().map_err(fail)?;
    let g = ctx.globals();
    let default: Value = ns.get("default").map_err(fail)?;
    if !default.is_function() && spec.id > 0 {
        return Err(crate::error::usage(format!(
            "{}: the script exports no default function: add `export default function () {{ ... }}`, which each \
             VU runs in a loop",
            spec.script.name
        )));
    }
    let mut loaded = Loaded { options: None, setup: false, teardown: false, handle_summary: false };
    for (name, has) in [
        ("default", None),
        ("setup", Some(&mut loaded.setup)),
        ("teardown", Some(&mut loaded.teardown)),
        ("handleSummary", Some(&mut loaded.handle_summary)),
    ] {
        let f: Value = ns.get(name).map_err(fail)?;
        if let Some(has) = has {
            *has = f.is_function();
        }
        g.set(format!("__k6_export_{name}"), f).map_err(fail)?;
    }
    let options: Value = ns.get("options").map_err(fail)?;
    if let Some(o) = options.as_object() {
        state.discard.set(o.get::<_, Option<bool>>("discardResponseBodies").map_err(fail)?.unwrap_or(false));
    }
    if !options.is_undefined() {
        loaded.options = ctx.json_stringify(options).map_err(fail)?.map(|s| s.to_string()).transpose().map_err(fail)?;
    }
    if let Some(data) = &spec.data {
        let data = ctx.json_parse(data.as_str()).map_err(fail)?;
        g.set("__k6_data", data).map_err(fail)?;
    }
    Ok(loaded)
}

/// Runs one call of the worker loop in the VU's context: what the VU hands out when it ends.
fn run_call(ctx: &Ctx<'_>, state: &State, call: Call, iterate: &Persistent<Function<'static>>) -> Out {
    state.group.borrow_mut().clear();
    let err = |e| describe(ctx, e);
    match call {
        Call::Iterate { iteration, warm } => Out::Done(run_iteration(ctx, state, iterate, iteration, warm)),
        Call::Setup => Out::Done(setup(ctx).map_err(err)),
        Call::Teardown => Out::Done(teardown(ctx).map(|()| None).map_err(err)),
        Call::Summary(data) => Out::Summarized(summarize(ctx, &data).map_err(err)),
    }
}

/// One run of the default function (through `iterate`, [`ITERATE`]),
/// timed into k6's `iteration_duration`.
fn run_iteration(
    ctx: &Ctx<'_>,
    state: &State,
    iterate: &Persistent<Function<'static>>,
    iteration: u64,
    warm: bool,
) -> Result<Option<String>, String> {
    let err = |e| describe(ctx, e);
    state.warm.set(warm);
    let f = iterate.clone().restore(ctx).map_err(err)?;
    let started = Instant::now();
    let result = f.call::<_, Value>((iteration,));
    // An iteration cut by the run's stop (Ctrl-C, or its VU ended
    // after the deadline's grace) is not a completed one, as in k6.
    if !warm && !state.stopped() {
        let h = &state.http;
        let mut m = lock(&state.metrics);
        // Tags made only when a threshold's submetric selects by them.
        let wanted = m.wants_tags(h.iteration_duration) || m.wants_tags(h.iterations);
        let tags = if wanted { vec![("group".to_owned(), String::new())] } else { Vec::new() };
        m.add_to(h.iteration_duration, started.elapsed().as_secs_f64() * 1000.0, &tags);
        m.add_to(h.iterations, 1.0, &tags);
    }
    result.map(|_| None).map_err(|e| if state.stopped() { "the run stopped".into() } else { err(e) })
}

/// `setup()`: its result as JSON, kept in the VU for `default(data)`.
fn setup(ctx: &Ctx<'_>) -> rquickjs::Result<Option<String>> {
    let g = ctx.globals();
    let f: Value = g.get("__k6_export_setup")?;
    let Some(f) = f.as_function() else { return Ok(None) };
    let data: Value = f.call(())?;
    if data.is_undefined() {
        return Ok(None);
    }
    let json = ctx.json_stringify(data)?.map(|s| s.to_string()).transpose()?;
    if let Some(json) = &json {
        g.set("__k6_data", ctx.json_parse(json.as_str())?)?;
    }
    Ok(json)
}

/// `teardown(data)`.
fn teardown(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let g = ctx.globals();
    let f: Value = g.get("__k6_export_teardown")?;
    let Some(f) = f.as_function() else { return Ok(()) };
    let data: Value = g.get("__k6_data")?;
    f.call::<_, Value>((data,))?;
    Ok(())
}

/// `handleSummary(data)`: each key of the object it returns with its
/// content (a string, an ArrayBuffer's bytes, anything else as a string).
fn summarize(ctx: &Ctx<'_>, data: &str) -> rquickjs::Result<Outputs> {
    let f: Function = ctx.globals().get("__k6_export_handleSummary")?;
    let returned: Value = f.call((ctx.json_parse(data)?,))?;
    let Some(o) = returned.as_object() else { return Ok(Vec::new()) };
    o.props::<String, Value>()
        .map(|p| {
            let (key, v) = p?;
            let bytes = match v.as_object().and_then(|o| rquickjs::ArrayBuffer::from_object(o.clone())) {
                // SAFETY: the bytes are copied at once; no JavaScript runs
                // while the slice lives.
                Some(b) => unsafe { b.as_bytes() }.map(<[u8]>::to_vec).unwrap_or_default(),
                None => v.get::<rquickjs::Coerced<String>>()?.0.into_bytes(),
            };
            Ok((key, bytes))
        })
        .collect()
}

/// k6's globals and the native functions its modules are made of.
fn install<'js>(ctx: &Ctx<'js>, state: &Rc<State>, env: &[(String, String)]) -> rquickjs::Result<()> {
    let g = ctx.globals();
    g.set("__VU", state.id)?;
    g.set("__ITER", 0)?;
    g.set("__k6_data", rquickjs::Undefined)?;
    let env_object = Object::new(ctx.clone())?;
    for (k, v) in env {
        env_object.set(k.as_str(), v.as_str())?;
    }
    g.set("__ENV", env_object)?;

    let core = Object::new(ctx.clone())?;
    let s = state.clone();
    core.set(
        "checked",
        Func::from(move |name: String, ok: bool, tags: Opt<Option<Object<'js>>>| {
            if !s.warm.get() {
                let mut tags = s.tags(tags.0.flatten().as_ref());
                tags.push(("check".into(), name.clone()));
                lock(&s.metrics).check(&name, ok, &tags);
            }
        }),
    )?;
    let s = state.clone();
    core.set(
        "enterGroup",
        Func::from(move |name: String| {
            let mut g = s.group.borrow_mut();
            g.push_str("::");
            g.push_str(&name);
        }),
    )?;
    let s = state.clone();
    core.set(
        "leaveGroup",
        Func::from(move || {
            let mut g = s.group.borrow_mut();
            let cut = g.rfind("::").unwrap_or(0);
            g.truncate(cut);
        }),
    )?;
    let s = state.clone();
    core.set(
        "sleep",
        Func::from(move |ctx: Ctx<'js>, seconds: f64| -> rquickjs::Result<()> {
            let stopped = || Exception::throw_message(&ctx, "the run stopped");
            if s.stopped() {
                return Err(stopped());
            }
            match s.suspend(Out::Sleep(Duration::from_secs_f64(seconds.clamp(0.0, 1e9)))) {
                In::Woke => Ok(()),
                _ => Err(stopped()),
            }
        }),
    )?;
    let text = state.text_summary;
    core.set(
        "textSummary",
        Func::from(move |ctx: Ctx<'js>, data: String, indent: String| -> rquickjs::Result<String> {
            let Some(text) = text else {
                return Err(Exception::throw_message(&ctx, "textSummary() is for handleSummary(data): call it there"));
            };
            let data = serde_json::from_str(&data).map_err(|e| Exception::throw_message(&ctx, &e.to_string()))?;
            Ok(text(&data, &indent))
        }),
    )?;
    g.set("__k6", core)?;

    http::install(ctx, state)?;
    shared::install(ctx, state)?;

    let metrics = Object::new(ctx.clone())?;
    let s = state.clone();
    metrics.set(
        "declare",
        Func::from(move |ctx: Ctx<'js>, name: String, kind: String, is_time: bool| -> rquickjs::Result<()> {
            let kind = Kind::parse(&kind).expect("k6/metrics declares its own kinds");
            lock(&s.metrics).declare(&name, kind, is_time).map_err(|e| Exception::throw_message(&ctx, &e))
        }),
    )?;
    let s = state.clone();
    metrics.set(
        "add",
        Func::from(
            move |ctx: Ctx<'js>, name: String, v: f64, tags: Opt<Option<Object<'js>>>| -> rquickjs::Result<()> {
                if s.init.get() {
                    return Err(Exception::throw_message(
                        &ctx,
                        "metrics can only be added to in a VU's code, not in the init context",
                    ));
                }
                if s.warm.get() {
                    return Ok(());
                }
                let tags = s.tags(tags.0.flatten().as_ref());
                lock(&s.metrics).add(&name, v, &tags).map_err(|e| Exception::throw_message(&ctx, &e))
            },
        ),
    )?;
    g.set("__k6_metrics", metrics)?;

    let s = state.clone();
    g.set(
        "open",
        Func::from(move |ctx: Ctx<'js>, path: String, mode: Opt<String>| -> rquickjs::Result<Value<'js>> {
            if !s.init.get() {
                return Err(Exception::throw_message(
                    &ctx,
                    "open() is only available in the init context (the script's top level): read the file there",
                ));
            }
            let full = s.dir.join(&path);
            let cap = crate::file_cap::Cap::config("a file the script opens");
            let bytes = crate::file_cap::read(&full, &format!("open({path:?})"), cap)
                .map_err(|e| Exception::throw_message(&ctx, &format!("{e:#}")))?;
            if mode.0.as_deref() == Some("b") {
                return rquickjs::ArrayBuffer::new(ctx.clone(), bytes)?.into_js(&ctx);
            }
            String::from_utf8_lossy(&bytes).into_owned().into_js(&ctx)
        }),
    )?;

    let console = Object::new(ctx.clone())?;
    for (name, level) in [("log", "INFO"), ("info", "INFO"), ("debug", "DEBU"), ("warn", "WARN"), ("error", "ERRO")] {
        let id = state.id;
        console.set(
            name,
            Func::from(move |ctx: Ctx<'js>, args: rquickjs::function::Rest<Value<'js>>| {
                let parts: Vec<String> = args
                    .0
                    .into_iter()
                    .map(|v| match v.as_string() {
                        Some(s) => s.to_string().unwrap_or_default(),
                        None => {
                            ctx.json_stringify(v).ok().flatten().and_then(|s| s.to_string().ok()).unwrap_or_default()
                        }
                    })
                    .collect();
                crate::console::line(format_args!("{level}[VU {id}] {}", parts.join(" ")));
            }),
        )?;
    }
    g.set("console", console)?;
    Ok(())
}
