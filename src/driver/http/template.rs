//! Request bodies rendered from a template for every request, so that every
//! request of `dbload http` differs (entity ids from a range, random walks,
//! timestamps) the way real traffic does: a server that caches by entity or
//! dedupes identical bodies is not flattered by one body sent a million times.
//!
//! Templates are MiniJinja (the project's one template engine, also the
//! HTML reports'). The random functions
//! draw from one ChaCha8 stream per VU ([`rng_for`]), so a seed gives the same
//! bodies on every run; only `now()` reads the clock, because a timestamp of
//! the send is what such APIs expect. Rendering happens on the producer
//! thread, never on the send path.
//!
//! It lives with the HTTP driver, not with the data models: a body is the
//! payload of an HTTP request, only `dbload http` renders one, and it is
//! checked and described with the rest of a request ([`super::RequestSpec`],
//! [`super::check`]). It borrows the models' seeded random streams and
//! number generator, so bodies and rows draw randomness the same way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Result;
use minijinja::value::Value;
use minijinja::{context, AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};
use rand::rngs::ChaCha8Rng;
use rand::RngExt;

use crate::error::usage;
use crate::model::fake::uniform_float;
use crate::model::{rng_for, Purpose};

const NAME: &str = "body";

/// A template that compiled and rendered once without error.
#[derive(Debug, Clone)]
pub struct BodyTemplate {
    source: String,
    /// As the user named it, for messages.
    file: String,
}

impl BodyTemplate {
    /// Checks a template (`--body-template FILE`, read by the HTTP
    /// configuration): a syntax error, an unknown function or variable is
    /// reported now, with its line, not mid-run.
    pub fn from_source(source: &str, file: &str) -> Result<BodyTemplate> {
        let template = BodyTemplate { source: source.to_owned(), file: file.to_owned() };
        template.check()?;
        Ok(template)
    }

    /// The file it came from, as the user named it.
    pub fn file(&self) -> &str {
        &self.file
    }

    fn check(&self) -> Result<()> {
        let mut renderer = self.renderer(0, 0).map_err(|e| self.error(&e))?;
        let mut out = Vec::new();
        renderer.render(&mut out).map_err(|e| self.error(&e))
    }

    fn error(&self, e: &Error) -> anyhow::Error {
        let line = e.line().map(|l| format!(", line {l}")).unwrap_or_default();
        let what = match e.detail() {
            Some(detail) => format!("{}: {detail}", e.kind()),
            None => e.kind().to_string(),
        };
        usage(format!(
            "--body-template {}{line}: {what}; see `dbload http --help` for the functions a template can call",
            self.file
        ))
    }

    /// The renderer of VU `vu`, with its own random stream (and its own
    /// compiled template: see [`Renderer::for_vu`] to share one).
    pub fn renderer(&self, seed: u64, vu: u32) -> Result<Renderer, Error> {
        let current = Arc::new(Mutex::new(VuState::new(seed, vu)));
        let mut env = Environment::new();
        // A body is not HTML: values go in as they are, `|tojson` quotes.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        // A misspelt variable is an error, not an empty string in the body.
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        register_functions(&mut env, &current);
        env.add_template_owned(NAME, self.source.clone())?;
        let compiled = Arc::new(Compiled { env, current, rendering: Mutex::new(()) });
        Ok(Renderer { compiled, state: VuState::new(seed, vu), vu, iteration: 0 })
    }
}

/// What a VU's random functions remember between requests.
struct VuState {
    rng: ChaCha8Rng,
    /// The current value of each `walk(name, ...)`.
    walks: HashMap<String, f64>,
}

impl VuState {
    fn new(seed: u64, vu: u32) -> VuState {
        VuState { rng: rng_for(seed, vu, Purpose::Data), walks: HashMap::new() }
    }
}

type Shared = Arc<Mutex<VuState>>;

fn lock(state: &Shared) -> MutexGuard<'_, VuState> {
    // One render at a time: a poisoned lock means a panic in one already,
    // and the state is still usable.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg)
}

fn register_functions(env: &mut Environment<'static>, state: &Shared) {
    let s = state.clone();
    env.add_function("randint", move |a: i64, b: i64| -> Result<i64, Error> {
        if a > b {
            return Err(invalid(format!("randint({a}, {b}): the first bound must not exceed the second")));
        }
        Ok(lock(&s).rng.random_range(a..=b))
    });
    let s = state.clone();
    env.add_function("uniform", move |a: f64, b: f64| -> Result<f64, Error> {
        if !(a.is_finite() && b.is_finite()) {
            return Err(invalid(format!("uniform({a}, {b}): both bounds must be finite numbers")));
        }
        if a >= b {
            return Err(invalid(format!("uniform({a}, {b}): the first bound must be below the second")));
        }
        Ok(uniform_float(&mut lock(&s).rng, a, b))
    });
    let s = state.clone();
    env.add_function("choice", move |items: Value| -> Result<Value, Error> {
        let n = items.len().filter(|&n| n > 0).ok_or_else(|| invalid("choice(): give a non-empty list".into()))?;
        let i = lock(&s).rng.random_range(0..n);
        items.get_item_by_index(i)
    });
    let s = state.clone();
    env.add_function("entity", move |prefix: String, n: i64| -> Result<String, Error> {
        if n < 1 {
            return Err(invalid(format!("entity({prefix:?}, {n}): the range needs at least 1 id")));
        }
        Ok(format!("{prefix}{}", lock(&s).rng.random_range(1..=n)))
    });
    let s = state.clone();
    // The walk stays within the finite floats: a body never holds `inf`.
    env.add_function("walk", move |name: String, start: f64, step: f64| -> Result<f64, Error> {
        if !(start.is_finite() && step.is_finite()) {
            return Err(invalid(format!("walk({name:?}, {start}, {step}): start and step must be finite numbers")));
        }
        let mut st = lock(&s);
        let delta = if step > 0.0 { uniform_float(&mut st.rng, -step, step) } else { 0.0 };
        let v = st.walks.entry(name).or_insert(start);
        let now = *v;
        *v = (*v + delta).clamp(f64::MIN, f64::MAX);
        Ok(now)
    });
    let s = state.clone();
    env.add_function("uuid", move || -> String {
        let mut b: [u8; 16] = lock(&s).rng.random();
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
    });
    env.add_function("now", || chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    env.add_function("now_ms", || chrono::Utc::now().timestamp_millis());
    // minijinja's own `range`, with the bounds whose length it cannot
    // compute refused: with a negative step it computes `start - end - step`
    // unchecked, which overflows (a panic in debug builds) on bounds far
    // apart (found by bench/fuzz.sh).
    env.add_function("range", |lower: isize, upper: Option<isize>, step: Option<isize>| {
        let (start, end) = upper.map_or((0, lower), |upper| (lower, upper));
        let length = step.unwrap_or(1).checked_neg().and_then(|down| start.checked_sub(end)?.checked_add(down));
        if length.is_none() || end.checked_sub(start).is_none() {
            return Err(invalid(format!("range({lower}, {upper:?}, {step:?}): bounds too far apart")));
        }
        minijinja::functions::range(lower, upper, step)
    });
}

/// The template compiled with its functions (~12 KiB), which the renderers
/// of many VUs may share: each VU's state is swapped in for its render.
struct Compiled {
    env: Environment<'static>,
    /// The state of the VU being rendered, which the functions draw from.
    current: Shared,
    /// Renders one at a time, so that no VU sees another's state.
    rendering: Mutex<()>,
}

/// Renders one VU's bodies, in order.
pub struct Renderer {
    compiled: Arc<Compiled>,
    state: VuState,
    vu: u32,
    iteration: u64,
}

impl Renderer {
    /// The renderer of VU `vu`, sharing this one's compiled template:
    /// thousands of VUs need one copy per producer thread, not one each.
    /// It renders what [`BodyTemplate::renderer`] would for `vu`.
    pub fn for_vu(&self, seed: u64, vu: u32) -> Renderer {
        Renderer { compiled: self.compiled.clone(), state: VuState::new(seed, vu), vu, iteration: 0 }
    }

    /// Renders the next body into `out` (cleared first).
    pub fn render(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        out.clear();
        let c = &*self.compiled;
        let _alone = c.rendering.lock().unwrap_or_else(|e| e.into_inner());
        let template = c.env.get_template(NAME)?;
        std::mem::swap(&mut *lock(&c.current), &mut self.state);
        let rendered = template.render_captured_to(context! { vu => self.vu, iteration => self.iteration }, &mut *out);
        std::mem::swap(&mut *lock(&c.current), &mut self.state);
        rendered?;
        self.iteration += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(source: &str, seed: u64, vu: u32, n: usize) -> Vec<String> {
        let t = BodyTemplate::from_source(source, "t.j2").unwrap();
        let mut r = t.renderer(seed, vu).unwrap();
        let mut out = Vec::new();
        (0..n)
            .map(|_| {
                r.render(&mut out).unwrap();
                String::from_utf8(out.clone()).unwrap()
            })
            .collect()
    }

    const NOTIFY: &str = r#"{"data":[{"id":"{{ entity('Room:', 100) }}","type":"Room","temperature":{"value":{{ walk('t', 23.3, 0.5) | round(2) }},"type":"Number"},"pressure":{"value":{{ randint(700, 740) }},"type":"Integer"},"n":{{ iteration }},"vu":{{ vu }}}]}"#;

    #[test]
    fn every_body_differs_and_is_json() {
        let b = bodies(NOTIFY, 1, 3, 200);
        for (i, body) in b.iter().enumerate() {
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(v["data"][0]["n"], i);
            assert_eq!(v["data"][0]["vu"], 3);
            let id = v["data"][0]["id"].as_str().unwrap();
            let n: u32 = id.strip_prefix("Room:").unwrap().parse().unwrap();
            assert!((1..=100).contains(&n));
        }
        let ids: std::collections::HashSet<_> = b.iter().map(|s| &s[..30]).collect();
        assert!(ids.len() > 50, "ids from the range should vary: {}", ids.len());
    }

    #[test]
    fn same_seed_same_bodies_other_vu_other_bodies() {
        assert_eq!(bodies(NOTIFY, 7, 0, 20), bodies(NOTIFY, 7, 0, 20));
        assert_ne!(bodies(NOTIFY, 7, 0, 20), bodies(NOTIFY, 7, 1, 20));
        assert_ne!(bodies(NOTIFY, 7, 0, 20), bodies(NOTIFY, 8, 0, 20));
    }

    #[test]
    fn walk_moves_by_at_most_its_step() {
        let b = bodies("{{ walk('x', 10, 1) }}", 1, 0, 100);
        let v: Vec<f64> = b.iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(v[0], 10.0);
        assert!(v.windows(2).all(|w| (w[1] - w[0]).abs() <= 1.0));
        assert!(v.windows(2).any(|w| w[1] != w[0]));
    }

    /// Issue 13 item 2: `uniform` and `walk` over ranges wider than f64
    /// holds (rand panicked) give finite values; bounds that are not finite
    /// are refused when the template is checked.
    #[test]
    fn extreme_float_ranges_give_finite_values() {
        for source in ["{{ uniform(-1e308, 1e308) }}", "{{ walk('w', 0, 1.7e308) }}"] {
            for body in bodies(source, 1, 0, 200) {
                assert!(body.parse::<f64>().is_ok_and(f64::is_finite), "{source}: {body}");
            }
        }
        let err = BodyTemplate::from_source("{{ uniform(0, 1e309) }}", "t.j2").unwrap_err();
        assert!(err.to_string().contains("finite"), "{err}");
    }

    /// Found by bench/fuzz.sh: minijinja's `range` panicked (an overflow)
    /// on bounds far apart with a negative step; it is refused instead.
    #[test]
    fn range_works_and_refuses_bounds_too_far_apart() {
        assert_eq!(bodies("{% for i in range(3, 0, -1) %}{{ i }}{% endfor %}", 1, 0, 1), ["321"]);
        let far = "{{ range(4736369230023204340, -2378042540194679616, -2108960266636891852) }}";
        let e = match BodyTemplate::from_source(far, "b.j2") {
            Err(e) => e.to_string(),
            Ok(t) => t.renderer(1, 0).unwrap().render(&mut Vec::new()).unwrap_err().to_string(),
        };
        assert!(e.contains("too far apart"), "{e}");
    }

    #[test]
    fn helpers_render() {
        let b =
            bodies("{{ uuid() }} {{ now() }} {{ now_ms() }} {{ choice(['a','b']) }} {{ 'x\"y' | tojson }}", 1, 0, 1);
        let parts: Vec<&str> = b[0].split(' ').collect();
        assert_eq!(parts[0].len(), 36);
        assert_eq!(&parts[0][14..15], "4");
        assert!(chrono::DateTime::parse_from_rfc3339(parts[1]).is_ok(), "{}", parts[1]);
        assert!(parts[2].parse::<i64>().unwrap() > 1_600_000_000_000);
        assert!(["a", "b"].contains(&parts[3]));
        assert_eq!(parts[4], r#""x\"y""#);
    }

    #[test]
    fn mistakes_are_usage_errors_with_the_line() {
        for (source, expected) in [
            ("{\n{{ nosuch }}", "line 2"),
            ("{{ randint(5, 1) }}", "first bound"),
            ("{% if %}", "line 1"),
            ("{{ nofunc(1) }}", "nofunc"),
        ] {
            let err = BodyTemplate::from_source(source, "t.j2").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2);
            let msg = err.to_string();
            assert!(msg.contains("--body-template t.j2") && msg.contains(expected), "{source}: {msg}");
        }
    }
}
