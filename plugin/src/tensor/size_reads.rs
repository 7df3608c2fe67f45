//! Watched size reads. A tracer that leaves a dimension of its inputs unspecialized relies on
//! the program never reading that size (a `len(x)`, an `x.shape[0]`, a reshape to `-1`, a
//! tensor made in the shape of another): each would bake the size into what it records. While
//! a thread watches, every read of a tensor's sizes notes the address of its data; the tensor
//! knows no tracer, only that someone asked to know.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads watching now: zero for almost every program, and then a read costs one load.
static WATCHERS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static READS: RefCell<Option<Vec<usize>>> = const { RefCell::new(None) };
}

/// Start noting size reads on this thread (until `finish`).
pub fn start() {
    READS.with(|r| {
        if r.borrow_mut().replace(Vec::new()).is_none() {
            WATCHERS.fetch_add(1, Ordering::Relaxed);
        }
    });
}

/// Stop noting; the addresses whose sizes were read since `start`.
pub fn finish() -> Vec<usize> {
    READS.with(|r| match r.borrow_mut().take() {
        Some(v) => {
            WATCHERS.fetch_sub(1, Ordering::Relaxed);
            v
        }
        None => Vec::new(),
    })
}

#[inline]
pub(crate) fn note(address: usize) {
    if WATCHERS.load(Ordering::Relaxed) > 0 {
        READS.with(|r| {
            if let Ok(mut r) = r.try_borrow_mut()
                && let Some(v) = r.as_mut()
            {
                v.push(address);
            }
        });
    }
}

/// How many reads this thread has noted so far (see `forget_since`).
pub fn mark() -> usize {
    READS.with(|r| r.borrow().as_ref().map_or(0, Vec::len))
}

/// Forget the reads noted since `mark`: a tracer that records what they computed as sizes
/// worked out per call has accounted for them.
pub fn forget_since(mark: usize) {
    READS.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            v.truncate(mark);
        }
    });
}
