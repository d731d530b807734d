//! k6's `SharedArray` (`k6/data`): the array a script makes in the init
//! context, made once for the whole run and kept once, as k6 keeps it,
//! rather than once per VU: a script that loads a large data file into a
//! SharedArray would otherwise cost every VU the file's memory. Each
//! element is kept as its JSON text and parsed again on each read (k6
//! does the same), so a VU that changes an element changes its own copy.
//!
//! The first VU to construct a name runs its function; the others find it
//! made. VUs on other threads that construct it at the same moment may
//! each run the function, and the first array stored stays: the script's
//! function is the same in every VU, so are its elements.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use rquickjs::function::Func;
use rquickjs::{Ctx, Exception, Object, Value};

use crate::stats::buffered::lock;

/// The run's arrays, by name.
#[derive(Debug, Default)]
pub struct SharedArrays(Mutex<HashMap<String, Arc<[Box<str>]>>>);

/// A VU's view: the arrays it opened, by handle (its index), read without
/// taking the run's lock.
#[derive(Debug, Default)]
pub(super) struct Opened(RefCell<Vec<Arc<[Box<str>]>>>);

impl Opened {
    fn push(&self, array: Arc<[Box<str>]>) -> usize {
        let mut opened = self.0.borrow_mut();
        opened.push(array);
        opened.len() - 1
    }

    fn get(&self, handle: usize) -> Option<Arc<[Box<str>]>> {
        self.0.borrow().get(handle).cloned()
    }
}

/// What the natives need of a VU: whether it is in its init context, the
/// run's arrays and its own handles.
pub(super) trait Holder {
    fn in_init(&self) -> bool;
    fn arrays(&self) -> &SharedArrays;
    fn opened(&self) -> &Opened;
}

/// `__k6_shared`: `open(name)` (a handle, or -1 when the array is not
/// made yet), `make(name, elements as JSON)` (a handle), `length(handle)`,
/// `get(handle, index)` (an element's JSON, or undefined); `k6/data`'s
/// `SharedArray` is made of them.
pub(super) fn install<'js, S: Holder + 'static>(ctx: &Ctx<'js>, state: &Rc<S>) -> rquickjs::Result<()> {
    let shared = Object::new(ctx.clone())?;
    let init_only = |ctx: &Ctx<'js>, s: &S| {
        if s.in_init() {
            Ok(())
        } else {
            Err(Exception::throw_message(
                ctx,
                "SharedArray can only be made in the init context (the script's top level): make it there",
            ))
        }
    };
    let s = state.clone();
    shared.set(
        "open",
        Func::from(move |ctx: Ctx<'js>, name: String| -> rquickjs::Result<i64> {
            init_only(&ctx, &s)?;
            let made = lock(&s.arrays().0).get(&name).cloned();
            Ok(made.map_or(-1, |array| s.opened().push(array) as i64))
        }),
    )?;
    let s = state.clone();
    shared.set(
        "make",
        Func::from(move |ctx: Ctx<'js>, name: String, elements: Vec<String>| -> rquickjs::Result<i64> {
            init_only(&ctx, &s)?;
            let array: Arc<[Box<str>]> = elements.into_iter().map(String::into_boxed_str).collect();
            let kept = lock(&s.arrays().0).entry(name).or_insert(array).clone();
            Ok(s.opened().push(kept) as i64)
        }),
    )?;
    let s = state.clone();
    shared
        .set("length", Func::from(move |handle: usize| -> usize { s.opened().get(handle).map_or(0, |a| a.len()) }))?;
    let s = state.clone();
    shared.set(
        "get",
        Func::from(move |ctx: Ctx<'js>, handle: usize, index: usize| -> rquickjs::Result<Value<'js>> {
            match s.opened().get(handle).as_deref().and_then(|a| a.get(index)) {
                Some(json) => ctx.json_parse(json.as_bytes().to_vec()),
                None => Ok(Value::new_undefined(ctx.clone())),
            }
        }),
    )?;
    ctx.globals().set("__k6_shared", shared)
}
