//! A test build's global allocator, which counts what one thread holds
//! while asked to: how a test checks the most memory some code needs
//! (a CrateDB batch is sent without its whole body in memory),
//! whatever the code allocates it with. Only the counting thread pays for
//! the count; the other tests' threads allocate as usual.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

thread_local! {
    /// While counting: bytes allocated less bytes freed since [`start`],
    /// and the most that ever was.
    static HELD: Cell<Option<(isize, isize)>> = const { Cell::new(None) };
}

/// Notes `delta` bytes allocated (negative: freed) by this thread.
fn note(delta: isize) {
    // `try_with`: the thread's own storage may be gone as it ends.
    let _ = HELD.try_with(|held| {
        if let Some((now, peak)) = held.get() {
            held.set(Some((now + delta, peak.max(now + delta))));
        }
    });
}

// SAFETY: every call goes to the system allocator with its own arguments;
// the count beside it neither allocates nor touches the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        if !q.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        q
    }
}

/// Starts counting this thread's allocations, from zero.
pub fn start() {
    HELD.set(Some((0, 0)));
}

/// Stops counting; the most bytes this thread held at once beyond what it
/// held at [`start`].
pub fn stop() -> usize {
    HELD.take().map_or(0, |(_, peak)| peak as usize)
}
