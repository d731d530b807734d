//! k6's `k6/http` on the VU's side: the native `request` and `batch` that
//! src/k6/js/http.js calls, the params it reads, and the response it makes.
//! A request leaves the VU's coroutine as [`Out::Request`] (or a batch as
//! [`Out::Batch`]) for `Vu::call` to make with dbload's own HTTP client;
//! its answer comes back as k6's response object, after its samples went
//! to the run's HTTP metrics. Kept apart from `vu`, which is the coroutine
//! and the lifecycle a VU runs in, whatever its script calls.

use std::rc::Rc;
use std::time::Duration;

use rquickjs::function::{Args, Constructor, FromParam, Func, ParamRequirement, ParamsAccessor};
use rquickjs::{Array, Ctx, Exception, FromJs, IntoJs, Object, Value};

use super::native::{strings_into, with_text, In, Out, State};
use crate::driver::http::client::{Answer, Request};
use crate::stats::buffered::lock;

/// k6's default `params.timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Installs `globalThis.__k6_http`: the native functions http.js is made of.
pub(super) fn install<'js>(ctx: &Ctx<'js>, state: &Rc<State>) -> rquickjs::Result<()> {
    let http = Object::new(ctx.clone())?;
    let s = state.clone();
    http.set(
        "request",
        Func::from(move |ctx: Ctx<'js>, given: Given<'js>| -> rquickjs::Result<Value<'js>> {
            request(&ctx, &s, given)
        }),
    )?;
    let s = state.clone();
    http.set(
        "batch",
        Func::from(move |ctx: Ctx<'js>, list: Array<'js>| -> rquickjs::Result<Array<'js>> { batch(&ctx, &s, list) }),
    )?;
    http.set(
        "headers",
        Func::from(|ctx: Ctx<'js>, raw: String| -> rquickjs::Result<Object<'js>> { headers(&ctx, &raw) }),
    )?;
    ctx.globals().set("__k6_http", http)
}

/// What `http.request` hands the native request (src/k6/js/http.js): the
/// class its response is made of, the request, and the fields of its
/// `params` that matter here, read in JavaScript (whose property names are
/// atoms made once, when the VU compiles the module) rather than looked up
/// by name from Rust on each request.
struct Given<'js> {
    response: Constructor<'js>,
    /// The method and URL as the script's values: copied into the
    /// request's reused strings, and handed back to the response as they
    /// are (no new strings made).
    method: Value<'js>,
    url: Value<'js>,
    body: Value<'js>,
    /// The body was an object, sent as a form.
    form: bool,
    headers: Option<Object<'js>>,
    timeout: Value<'js>,
    tags: Option<Object<'js>>,
    /// `params.responseType`.
    response_type: Value<'js>,
}

/// `Given`'s positional arguments.
const GIVEN: usize = 9;

impl<'js> FromParam<'js> for Given<'js> {
    fn param_requirement() -> ParamRequirement {
        (0..GIVEN).fold(ParamRequirement::none(), |r, _| r.combine(ParamRequirement::single()))
    }

    fn from_param<'a>(params: &mut ParamsAccessor<'a, 'js>) -> rquickjs::Result<Self> {
        let ctx = params.ctx().clone();
        Given::from_values(&ctx, || Ok(params.arg()))
    }
}

impl<'js> Given<'js> {
    /// From its values in order (the arguments of `request`, or one
    /// element of `batch`'s list).
    fn from_values(ctx: &Ctx<'js>, mut next: impl FnMut() -> rquickjs::Result<Value<'js>>) -> rquickjs::Result<Self> {
        Ok(Given {
            response: Constructor::from_js(ctx, next()?)?,
            method: next()?,
            url: next()?,
            body: next()?,
            form: bool::from_js(ctx, next()?)?,
            headers: Option::from_js(ctx, next()?)?,
            timeout: next()?,
            tags: Option::from_js(ctx, next()?)?,
            response_type: next()?,
        })
    }
}

/// What a response's `body` is: k6's `params.responseType`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BodyType {
    /// A string (k6's default).
    Text,
    /// An ArrayBuffer.
    Binary,
    /// null: the body is read and dropped (`options.discardResponseBodies`'s default).
    None,
}

impl BodyType {
    /// `params.responseType` as given; without it, `none` if the options
    /// discard response bodies, else `text`.
    fn of(given: &Value<'_>, discard: bool) -> Result<BodyType, String> {
        if given.is_undefined() || given.is_null() {
            return Ok(if discard { BodyType::None } else { BodyType::Text });
        }
        let name = given.get::<rquickjs::Coerced<String>>().map(|c| c.0).unwrap_or_default();
        match name.as_str() {
            "text" => Ok(BodyType::Text),
            "binary" => Ok(BodyType::Binary),
            "none" => Ok(BodyType::None),
            _ => Err(format!("params.responseType {name:?}: give \"text\", \"binary\" or \"none\"")),
        }
    }
}

/// A request made of what the script gave, and what its response needs.
struct Pending<'js> {
    response: Constructor<'js>,
    method: Value<'js>,
    url: Value<'js>,
    tags: Option<Object<'js>>,
    body_type: BodyType,
}

/// Refuses a request in the init context or once the run stopped.
fn may_request(ctx: &Ctx<'_>, s: &State) -> rquickjs::Result<()> {
    if s.init.get() {
        return Err(Exception::throw_message(
            ctx,
            "http requests can only be made in a VU's code (default, setup, teardown), not in the init context",
        ));
    }
    if s.stopped() {
        return Err(Exception::throw_message(ctx, "the run stopped"));
    }
    Ok(())
}

/// `http.request(...)`: the request handed out of the VU's coroutine, the
/// VU suspended until its answer, the answer as k6's response object.
/// The request's buffers are the VU's, reused from one request to the next.
fn request<'js>(ctx: &Ctx<'js>, s: &State, given: Given<'js>) -> rquickjs::Result<Value<'js>> {
    may_request(ctx, s)?;
    let mut r = s.request.take().unwrap_or_default();
    let pending = prepare(ctx, s, given, &mut r)?;
    let In::Answer(answer, r) = s.suspend(Out::Request(r)) else {
        return Err(Exception::throw_message(ctx, "the run stopped"));
    };
    let response = finish(ctx, s, pending, &r, *answer);
    s.request.set(Some(r));
    response
}

/// `http.batch(...)`: its requests (each as `request` takes them) handed
/// out together and made at once; their responses in order.
fn batch<'js>(ctx: &Ctx<'js>, s: &State, list: Array<'js>) -> rquickjs::Result<Array<'js>> {
    may_request(ctx, s)?;
    let mut requests = Vec::with_capacity(list.len());
    let mut pending = Vec::with_capacity(list.len());
    for item in list.iter::<Array<'js>>() {
        let item = item?;
        let mut at = 0;
        let given = Given::from_values(ctx, || {
            at += 1;
            item.get(at - 1)
        })?;
        let mut r = Request::default();
        pending.push(prepare(ctx, s, given, &mut r)?);
        requests.push(r);
    }
    let In::Answers(answers, requests) = s.suspend(Out::Batch(requests)) else {
        return Err(Exception::throw_message(ctx, "the run stopped"));
    };
    let out = Array::new(ctx.clone())?;
    for (i, ((p, r), a)) in pending.into_iter().zip(&requests).zip(answers).enumerate() {
        out.set(i, finish(ctx, s, p, r, a)?)?;
    }
    Ok(out)
}

/// Fills `r` (its buffers reused) with the request `given` asks for:
/// what its response will need.
fn prepare<'js>(ctx: &Ctx<'js>, s: &State, given: Given<'js>, r: &mut Request) -> rquickjs::Result<Pending<'js>> {
    let throw = |m: &str| Exception::throw_message(ctx, m);
    let Given { response, method, url, body, form, headers, timeout, tags, response_type } = given;
    let body_type = BodyType::of(&response_type, s.discard.get()).map_err(|m| throw(&m))?;
    with_text(&method, |t| t.clone_into(&mut r.method))?;
    with_text(&url, |t| t.clone_into(&mut r.url))?;
    match &headers {
        Some(h) => strings_into(h, &mut r.headers)?,
        None => r.headers.clear(),
    }
    r.timeout = if timeout.is_undefined() || timeout.is_null() {
        DEFAULT_TIMEOUT
    } else {
        timeout_of(&timeout).map_err(|m| throw(&m))?
    };
    r.has_body = !(body.is_null() || body.is_undefined());
    r.body.clear();
    if let Some(b) = body.as_object().and_then(|o| rquickjs::ArrayBuffer::from_object(o.clone())) {
        // SAFETY: the bytes are copied at once; no JavaScript runs (and so
        // nothing can detach or resize the buffer) while the slice lives.
        r.body.extend_from_slice(unsafe { b.as_bytes() }.unwrap_or_default());
    } else if r.has_body {
        with_text(&body, |t| r.body.extend_from_slice(t.as_bytes()))?;
    }
    if form && !r.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type")) {
        r.headers.push(("Content-Type".into(), "application/x-www-form-urlencoded".into()));
    }
    Ok(Pending { response, method, url, tags, body_type })
}

/// Its metrics' samples, then k6's response object: an instance of
/// http.js's `Response`, made with its values in order.
fn finish<'js>(
    ctx: &Ctx<'js>,
    s: &State,
    pending: Pending<'js>,
    r: &Request,
    mut answer: Answer,
) -> rquickjs::Result<Value<'js>> {
    let Pending { response, method: method_js, url: url_js, tags: given_tags, body_type } = pending;
    let t = answer.timings;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    if !s.warm.get() {
        let failed = answer.error.is_some() || !(200..400).contains(&answer.status);
        let h = &s.http;
        let mut m = lock(&s.metrics);
        // A sample's tags cost allocations: made only when a threshold's
        // submetric of an HTTP metric selects by them.
        let tags = if [
            h.reqs,
            h.failed,
            h.duration,
            h.blocked,
            h.connecting,
            h.tls_handshaking,
            h.sending,
            h.waiting,
            h.receiving,
        ]
        .iter()
        .any(|&id| m.wants_tags(id))
        {
            let mut tags = s.tags(given_tags.as_ref());
            if !tags.iter().any(|(k, _)| k == "name") {
                tags.push(("name".into(), r.url.clone()));
            }
            tags.push(("method".into(), r.method.clone()));
            tags.push(("status".into(), answer.status.to_string()));
            tags
        } else {
            Vec::new()
        };
        for (id, v) in [
            (h.reqs, 1.0),
            (h.failed, if failed { 1.0 } else { 0.0 }),
            (h.duration, ms(t.duration())),
            (h.blocked, ms(t.connecting + t.tls_handshaking)),
            (h.connecting, ms(t.connecting)),
            (h.tls_handshaking, ms(t.tls_handshaking)),
            (h.sending, ms(t.sending)),
            (h.waiting, ms(t.waiting)),
            (h.receiving, ms(t.receiving)),
        ] {
            m.add_to(id, v, &tags);
        }
    }
    let mut args = Args::new(ctx.clone(), 14);
    args.push_arg(answer.status)?;
    args.push_arg(url_js)?;
    args.push_arg(match body_type {
        BodyType::Text => String::from_utf8_lossy(&answer.body).into_js(ctx)?,
        BodyType::Binary => rquickjs::ArrayBuffer::new(ctx.clone(), std::mem::take(&mut answer.body))?.into_js(ctx)?,
        BodyType::None => Value::new_null(ctx.clone()),
    })?;
    // The object `res.headers` is made of them only when a script reads it.
    args.push_arg(answer.headers.as_str())?;
    args.push_arg(answer.error.as_deref().unwrap_or_default())?;
    args.push_arg(if answer.error.is_some() { 1000 } else { 0 })?;
    for d in [
        t.connecting + t.tls_handshaking,
        t.connecting,
        t.tls_handshaking,
        t.sending,
        t.waiting,
        t.receiving,
        t.duration(),
    ] {
        args.push_arg(ms(d))?;
    }
    args.push_arg(method_js)?;
    response.construct_args(args)
}

/// `res.headers`, made of the raw headers `finish` gave the response: by
/// their canonical names, a repeated header's values joined with ", ", as
/// k6 joins them.
fn headers<'js>(ctx: &Ctx<'js>, raw: &str) -> rquickjs::Result<Object<'js>> {
    let headers = Object::new(ctx.clone())?;
    for (name, value) in raw.lines().filter_map(|l| l.split_once(':')) {
        let name = canonical(name);
        let joined = match headers.get::<_, Option<String>>(name.as_str())? {
            Some(before) => format!("{before}, {value}"),
            None => value.to_owned(),
        };
        headers.set(name, joined)?;
    }
    Ok(headers)
}

/// A header's name as k6 gives it (Go's canonical form): `content-type`
/// is `Content-Type`.
fn canonical(name: &str) -> String {
    let mut up = true;
    name.chars()
        .map(|c| {
            let out = if up { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
            up = c == '-';
            out
        })
        .collect()
}

/// `params.timeout`: ms as a number, or a k6 duration string (`"30s"`).
fn timeout_of(v: &Value<'_>) -> Result<Duration, String> {
    if let Some(ms) = v.as_number() {
        return Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let s = v.as_string().and_then(|s| s.to_string().ok()).unwrap_or_default();
    humantime::parse_duration(&s).map_err(|e| format!("params.timeout {s:?}: {e}; give a time such as \"30s\""))
}
